// A small English corpus, written for this project, that the fixture tokenizer's
// BPE merges are trained on. One sentence per line.
export const CORPUS = `The cat sat on the mat and looked at the dog.
The dog ran to the park with a ball in its mouth.
A small bird sang in the tree near the house.
It is a good day to go for a walk in the park.
We went to the market to buy some bread and milk.
They said that the weather will be nice this week.
She has a new book about the history of the world.
He likes to read in the morning before work.
What is the capital of France? The capital of France is Paris.
How are you today? I am fine, thank you for asking.
Can you tell me a story about a cat and a dog?
Please explain how the sun makes light and heat.
This is a simple test of the system.
The user asked a question and the assistant gave an answer.
The system message tells the assistant how to help the user.
You are a helpful assistant. Answer the user with care.
In the morning the sun comes up over the hills.
At night the moon and the stars light the sky.
My friend has a red car and a blue bike.
Our team will meet at the office on Monday.
There are many people in the city at this time of year.
When the rain stops we will go out to play.
If you want to learn, you should read every day.
Water is good for you, and so is a long walk.
The children play in the garden after school.
For dinner we had fish, rice and green beans.
Do you know where the station is?
Yes, it is next to the old church on the main road.
No, I do not think that is the right way.
Why is the sky blue? Light from the sun is scattered by the air.
Write a short poem about the sea and the wind.
The sea is calm today and the wind is soft.
Tell me about the stock market and the price of gold.
The market went up today, and prices were higher.
I would like a cup of tea with milk, please.
Thank you for your help with the project.
Hello, how can I help you today?
Hello there! It is nice to meet you.
Good morning to all of you, and welcome.
Every time I see the sea I think of home.
One day the little fox found a way out of the forest.
Then the fox ran home to see his family.
Some people like coffee, but others like tea.
Many years ago there was a king who lived in a castle.
The king had three daughters and one son.
Her name was Anna and she loved to sing.
His name was Tom and he loved to paint.
Music and art make people happy.
Science helps us understand the world around us.
Computers can do many things very fast.
The model reads the text and writes a reply.
A language model predicts the next word in the text.
The answer is simple: try again and do your best.
Be kind to others and they will be kind to you.
After the game we all went home and had a rest.
Before you leave, please close the door and the window.
Where do you live? I live in a small town by the river.
Which color do you like best? I like green best.
Who wrote this letter? My mother wrote it last year.
All of the students passed the test this year.
Over the years the town has grown into a city.
So we made a plan and we followed it to the end.
Now it is time to go to bed and sleep well.
Maybe we can go to the beach next summer.
Sometimes the best thing to do is to wait.
Here is the list of things we need for the trip.
Just take a deep breath and start again.
Let us count: one, two, three, four, five, six, seven, eight, nine, ten.
The number of people in the room was 42.
user assistant system user assistant system user assistant system
user: hello
assistant: hello, how can I help?
system: you are a helpful assistant
`;
